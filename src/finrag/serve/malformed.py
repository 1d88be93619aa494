"""The malformed requests of the load test's mixed row, apart from the locustfile (importing locust patches the
process with gevent, which a test process must not get)."""

from __future__ import annotations

# Malformed bodies as raw JSON text (ASCII, with the escapes a JSON encoder would refuse to write): each must get a 4xx
MALFORMED: dict[str, bytes] = {
    "lone surrogate": b'{"question": "\\ud800 revenue?"}',
    "NUL character": b'{"question": "revenue\\u0000 in 2019?"}',
    "not JSON": b'{"question": ',
    "no question": b"{}",
    "wrong type": b'{"question": 42}',
    "unknown field": b'{"question": "revenue?", "temperature": 2}',
    "unknown qid": b'{"question": "revenue?", "qid": "no-such-question"}',
}
