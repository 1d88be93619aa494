"""Every params.yaml section and its typed model, for checking the whole file at once (tests, `finrag`).

Why here, above every layer: each model lives beside the step it configures (finrag.<step>.params), so that a
stage's code deps name only its own section's module; this one module imports them all and no stage imports it.
"""

from __future__ import annotations

from pathlib import Path

from finrag.core.config import params
from finrag.core.params import ParamsError, StageParams
from finrag.generate.params import GenerateParams
from finrag.ingest.params import DataParams, IngestParams, QuestionsParams
from finrag.release.params import ReplayTimeParams
from finrag.report.params import PredictionsParams
from finrag.retrieve.conditions import ContextConditionsParams
from finrag.retrieve.evaluation_params import ContextsParams, GridParams, RetrieveFilteredParams, SelectParams
from finrag.retrieve.finance_params import RetrieveFinanceDenseParams, RetrieveFinanceParams
from finrag.retrieve.params import ChunkParams, EmbedParams, RerankerParams, RetrieveParams
from finrag.retrieve.rebuild_cost import RebuildCostParams
from finrag.score.conditions import ConditionsParams
from finrag.score.params import ScoreParams
from finrag.score.verifier.params import VerifierDataParams, VerifierTrainParams
from finrag.serve.params import ServeLoadParams, ServeParams, SetupTimeParams
from finrag.synthetic.params import SyntheticCorpusParams, SyntheticGenerateParams, SyntheticStudyParams
from finrag.trust.judge_cost import JudgeCostParams
from finrag.trust.judge_error import JudgeErrorParams
from finrag.trust.params import AgreementParams, GraderValidationParams

SECTIONS: dict[str, type[StageParams]] = {
    cls.section: cls
    for cls in (
        DataParams,
        IngestParams,
        QuestionsParams,
        ChunkParams,
        GridParams,
        EmbedParams,
        RerankerParams,
        RetrieveParams,
        SelectParams,
        RetrieveFilteredParams,
        RetrieveFinanceParams,
        RetrieveFinanceDenseParams,
        ContextsParams,
        GenerateParams,
        ScoreParams,
        GraderValidationParams,
        VerifierDataParams,
        VerifierTrainParams,
        AgreementParams,
        PredictionsParams,
        SyntheticCorpusParams,
        SyntheticGenerateParams,
        SyntheticStudyParams,
        ServeParams,
        ServeLoadParams,
        SetupTimeParams,
        ReplayTimeParams,
        RebuildCostParams,
        ContextConditionsParams,
        ConditionsParams,
        JudgeCostParams,
        JudgeErrorParams,
    )
}


def check_all(path: Path | None = None) -> dict[str, StageParams]:
    """Every section of params.yaml validated; a section without a model is an error too."""
    data = params(path=path)
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise ParamsError(f"params.yaml has sections no model describes: {unknown}")
    return {name: SECTIONS[name].from_dict(section) for name, section in data.items()}
