"""ReForm-Eval MSCOCO-OC: the ``reform-eval-mscoco-oc`` benchmark definition."""

from __future__ import annotations

from lmmprobe.data.benchmarks.reform_common import ReformSet, reform_set

__all__ = ["MSCOCO_OC"]

MSCOCO_OC = reform_set(
    ReformSet(
        slug="mscoco-oc",
        title="MSCOCO-OC",
        dimension="fine",
        files=(
            "huggingface_data/MSCOCO/object-counting-all.json",
            "huggingface_data/MSCOCO/objectCounting_answer_list/answer_list.json",
        ),
        config="build/configs/ObjectCounting_mscoco_val.yaml",
        family="counting",
        formulation="SingleChoice",
        source="build/MSCOCO/object_counting_dataset.py",
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
        loader="MSCOCO",
    )
)
