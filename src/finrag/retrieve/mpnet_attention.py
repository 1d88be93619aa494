"""MPNet's eager attention (matmul, scale, +bias, +mask, softmax, matmul, each a (batch, heads, seq, seq) tensor)
replaced by one fused `scaled_dot_product_attention` call with the relative-position bias and padding mask added
once per forward, not once per layer; checked by cosine agreement with the eager model (tests/test_embedding.py)."""

from __future__ import annotations

import logging
import types

log = logging.getLogger(__name__)


def _mpnet_sdpa_forward(
    self, hidden_states, attention_mask=None, position_bias=None, output_attentions=False, **kw
):
    """MPNetSelfAttention.forward with one fused SDPA call; mathematically the same as the eager version."""
    import torch.nn.functional as F

    if output_attentions:  # the fused kernel does not return the probabilities
        return self._finrag_eager_forward(
            hidden_states, attention_mask, position_bias, output_attentions, **kw
        )
    shape = (*hidden_states.shape[:-1], -1, self.attention_head_size)
    q = self.q(hidden_states).view(shape).transpose(1, 2)
    k = self.k(hidden_states).view(shape).transpose(1, 2)
    v = self.v(hidden_states).view(shape).transpose(1, 2)
    shared = (
        self._finrag_bias
    )  # one dict for all layers: the bias tensors are the same objects in every layer
    if shared.get("pos") is not position_bias or shared.get("mask") is not attention_mask:
        bias = None
        if position_bias is not None:
            bias = position_bias.to(q.dtype)
        if attention_mask is not None:
            m = attention_mask.to(q.dtype)
            bias = m if bias is None else bias + m
        shared.update(pos=position_bias, mask=attention_mask, bias=bias)
    ctx = F.scaled_dot_product_attention(q, k, v, attn_mask=shared["bias"], dropout_p=0.0)
    ctx = ctx.transpose(1, 2).reshape(*hidden_states.shape[:-1], self.all_head_size)
    return (self.o(ctx),)


def patch_mpnet_attention(model) -> int:
    """Swap every MPNetSelfAttention's forward for the fused one; returns how many were patched (0 if the
    installed transformers has a different MPNet layout, in which case the eager code is kept)."""
    try:
        from transformers.models.mpnet.modeling_mpnet import MPNetSelfAttention
    except ImportError:
        return 0
    mods = [m for m in model.modules() if isinstance(m, MPNetSelfAttention)]
    if not mods or not all(
        all(hasattr(m, a) for a in ("q", "k", "v", "o", "attention_head_size", "all_head_size")) for m in mods
    ):
        return 0
    shared: dict = {}
    for m in mods:
        m._finrag_eager_forward = m.forward  # type: ignore[assignment]
        m._finrag_bias = shared  # type: ignore[assignment]
        m.forward = types.MethodType(_mpnet_sdpa_forward, m)  # type: ignore[method-assign]
    for enc in (m for m in model.modules() if type(m).__name__ == "MPNetEncoder"):
        # drop the (batch, heads, seq, seq) bias after each forward instead of holding it until the next call
        enc.register_forward_hook(lambda *_: shared.clear())
    return len(mods)
