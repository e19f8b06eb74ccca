"""ReForm-Eval TDIUC-Counting: the ``reform-eval-tdiuc-counting`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["TDIUC_COUNTING"]

TDIUC_COUNTING = reform_set(
    ReformSet(
        slug="tdiuc-counting",
        title="TDIUC-Counting",
        dimension="fine",
        files=(
            "huggingface_data/TDIUC/TDIUC_val_ques.json",
            "huggingface_data/TDIUC/TDIUC_val_anns.json",
            "huggingface_data/TDIUC/choice_list/counting.json",
        ),
        config="build/configs/TDIUC_counting.yaml",
        family="tdiuc",
        formulation="SingleChoice",
        source="build/TDIUC/tdiuc_dataset.py",
        instructs=(
            'Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
            "To answer the question, you can evaluate the picture and choose the accurate answer among the given options.",
            'From the options provided, choose the answer option that fits the question and image formatted as "(A)" or "(1)".',
            'Select the best answer choice for the given question and image, output the correct option(such as "(A)" or "(1)")',
            'Please select the appropriate response option by assessing the question, image, and provided choices. Output the correct option in the format of "(A)" or "(1)".',
        ),
        likelihood_instructs=(
            "Please evaluate this image and offer a response to the question.",
            "Take a look at this image and give your thoughts on the question.",
            "Assess this image and provide an answer to the question.",
            "Please investigate this image and share your response to the question.",
            "Your task is to analyze this picture and respond to the question.",
        ),
        instruct='Below I will give a question, a picture and options, which are ABCD or 1234, I need you to output only the correct option(such as "(A)" or "(1)")',
        task="counting",
        loader="TDIUC",
    )
)
