"""APEx's select tools: generation through the renderer, retrieval with matching and fallback."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from lmmprobe.metrics.embedding import SentenceEmbedder
from lmmprobe.tools import ToolCallError, call_tool, get_tool, validate_call
from lmmprobe.tools.retrieval import LabelledCollection, imagenet_x_taxonomy
from lmmprobe.tools.select import SelectContext, SelectedImage, drawable_classes

COLORS = {"dog": (200, 40, 40), "car": (40, 40, 200), "n01440764": (40, 160, 40)}


def select(name: str, context: SelectContext, seed: int = 0, **args) -> SelectedImage:
    return get_tool(name, "select").select(context, seed=seed, **args)


def arr(image: Image.Image) -> np.ndarray:
    return np.asarray(image, dtype=np.int16)


@pytest.fixture(scope="module")
def collection(tmp_path_factory: pytest.TempPathFactory) -> LabelledCollection:
    root = tmp_path_factory.mktemp("photos")
    for name, color in COLORS.items():
        (root / name).mkdir()
        for i in range(4):
            buf = io.BytesIO()
            Image.new("RGB", (60 + 10 * i, 40), color).save(buf, format="PNG")
            (root / name / f"{i}.png").write_bytes(buf.getvalue())
    return LabelledCollection.from_folder(root, taxonomy=imagenet_x_taxonomy())


@pytest.fixture(scope="module")
def context(collection: LabelledCollection) -> SelectContext:
    return SelectContext(collection=collection, size=64)


def test_select_tools_are_registered_as_select():
    for name in ("TextToImageGeneration", "TextToImageRetrieval"):
        spec = get_tool(name)
        assert spec.kind == "select"
        assert list(spec.schema()["properties"]) == ["class_name", "image_type"]
        with pytest.raises(ToolCallError, match="is a select tool"):
            call_tool(Image.new("RGB", (8, 8)), {"tool": name, "args": {"class_name": "dog"}})
    with pytest.raises(ToolCallError, match="is a transform"):
        get_tool("RotateImage").select(SelectContext())


def test_generation_draws_the_class_seeded():
    ctx = SelectContext(size=80)
    a = select("TextToImageGeneration", ctx, seed=1, class_name="dog")
    b = select("TextToImageGeneration", ctx, seed=1, class_name="dog")
    c = select("TextToImageGeneration", ctx, seed=2, class_name="dog")
    assert (a.source, a.class_name, a.note, a.path) == ("generated", "dog", None, None)
    assert a.image.size == (80, 80) and a.image.mode == "RGB"
    assert np.array_equal(arr(a.image), arr(b.image))
    assert not np.array_equal(arr(a.image), arr(c.image))
    cat = select("TextToImageGeneration", ctx, seed=1, class_name="cat")
    assert not np.array_equal(arr(a.image), arr(cat.image))


def test_generation_near_and_far_names():
    ctx = SelectContext(size=64, embedder=SentenceEmbedder)
    near = select("TextToImageGeneration", ctx, class_name="puppy")
    assert near.class_name == "dog" and "closest class 'dog'" in (near.note or "")
    assert select("TextToImageGeneration", ctx, class_name="Dog").note is None
    with pytest.raises(ToolCallError, match=r"cannot draw 'quantum chromodynamics'.*closest:"):
        select("TextToImageGeneration", ctx, class_name="quantum chromodynamics")


def test_without_an_embedder_only_exact_names_resolve():
    bare = SelectContext(size=48)  # tools never load an embedder themselves
    assert select("TextToImageGeneration", bare, class_name="Dog").class_name == "dog"
    with pytest.raises(ToolCallError, match=r"needs a sentence embedder.*embedder=lmmprobe"):
        select("TextToImageGeneration", bare, class_name="puppy")


def test_contexts_given_one_factory_share_its_embedder():
    made: list[object] = []

    def factory() -> object:
        made.append(object())
        return made[-1]

    first = SelectContext(embedder=factory).get_embedder()  # type: ignore[arg-type]
    second = SelectContext(size=32, embedder=factory).get_embedder()  # type: ignore[arg-type]
    assert first is second and len(made) == 1


def test_random_is_seeded_and_groups_restrict_it():
    ctx = SelectContext(size=48)
    picks = [select("TextToImageGeneration", ctx, seed=s, class_name="random") for s in range(8)]
    again = [select("TextToImageGeneration", ctx, seed=s, class_name="random") for s in range(8)]
    assert [p.class_name for p in picks] == [p.class_name for p in again]
    assert len({p.class_name for p in picks}) > 3
    assert all(p.class_name in drawable_classes() for p in picks)
    groups = drawable_classes()
    group = sorted(set(groups.values()))[0]
    for s in range(5):
        got = select("TextToImageGeneration", ctx, seed=s, class_name=f"random:{group}")
        assert groups[got.class_name] == group
    with pytest.raises(ToolCallError, match="no class group 'martians'; groups:"):
        select("TextToImageGeneration", ctx, class_name="random:martians")


def test_retrieval_returns_a_collection_image(context: SelectContext):
    got = select("TextToImageRetrieval", context, seed=3, class_name="dog")
    assert (got.source, got.class_name, got.note) == ("retrieved", "dog", None)
    assert Path(got.path or "").parent.name == "dog"
    assert got.image.size == (64, 64)  # fitted to the context size
    assert got.image.getpixel((10, 10)) == COLORS["dog"]
    same = select("TextToImageRetrieval", context, seed=3, class_name="dog")
    assert same.path == got.path
    assert (
        len(
            {
                select("TextToImageRetrieval", context, seed=s, class_name="dog").path
                for s in range(12)
            }
        )
        > 1
    )
    tench = select("TextToImageRetrieval", context, class_name="Tench")  # a WordNet-id folder
    assert tench.class_name == "tench" and tench.source == "retrieved"


def test_retrieval_paraphrase_falls_back_or_matches(collection: LabelledCollection):
    strict = SelectContext(collection=collection, size=64, embedder=SentenceEmbedder)  # 0.95
    got = select("TextToImageRetrieval", strict, class_name="puppy")
    assert got.source == "generated" and got.class_name == "dog"
    assert "closest 'dog'" in (got.note or "") and "< 0.95" in (got.note or "")
    assert "generated instead" in (got.note or "")
    lenient = SelectContext(
        collection=collection, size=64, match_threshold=0.75, embedder=SentenceEmbedder
    )
    matched = select("TextToImageRetrieval", lenient, class_name="puppy")
    assert matched.source == "retrieved" and matched.class_name == "dog"
    assert "matched 'puppy'" in (matched.note or "")


def test_retrieval_falls_back_for_drawings_and_without_collection(context: SelectContext):
    cartoon = select(
        "TextToImageRetrieval", context, class_name="dog", image_type="watercolor painting"
    )
    assert cartoon.source == "generated" and "'watercolor'" in (cartoon.note or "")
    bare = select("TextToImageRetrieval", SelectContext(size=64), class_name="dog")
    assert bare.source == "generated" and "no retrieval collection" in (bare.note or "")


def test_retrieval_random_and_group(context: SelectContext):
    picks = [
        select("TextToImageRetrieval", context, seed=s, class_name="random") for s in range(10)
    ]
    assert {p.class_name for p in picks} <= {"dog", "car", "tench"} and len(
        {p.class_name for p in picks}
    ) > 1
    assert all(p.source == "retrieved" for p in picks)
    assert [p.path for p in picks] == [
        select("TextToImageRetrieval", context, seed=s, class_name="random").path for s in range(10)
    ]
    other = select("TextToImageRetrieval", context, class_name="random:other")  # ImageNet-X group
    assert other.class_name == "tench"
    with pytest.raises(ToolCallError, match="no class group 'dog'"):
        select(
            "TextToImageRetrieval", context, class_name="random:dog"
        )  # no dog in this folder's taxonomy


@pytest.mark.parametrize(
    "name",
    ["../../etc/passwd", "dog/../../x", "__class__", "a" * 81, "", "dog;rm -rf", "C:\\x", "dog\n"],
)
def test_bad_class_names_are_rejected(name):
    for tool in ("TextToImageGeneration", "TextToImageRetrieval"):
        with pytest.raises(ToolCallError, match="class_name"):
            validate_call({"tool": tool, "args": {"class_name": name}})


@pytest.mark.slow
def test_diffusion_renderer_draws_any_class_and_regenerates_styles():
    from lmmprobe.synth.diffusion import DiffusionRenderer
    from lmmprobe.synth.tiny_diffusion import tiny_sdxl_path
    from lmmprobe.tools import compose

    ctx = SelectContext(renderer=DiffusionRenderer(str(tiny_sdxl_path()), steps=1), size=48)
    gen = {"tool": "TextToImageGeneration", "args": {"class_name": "golden retriever"}}
    got = select("TextToImageGeneration", ctx, seed=2, class_name="golden retriever")
    assert (got.class_name, got.note, got.image.size) == ("golden retriever", None, (48, 48))
    styled = compose(
        gen, [{"tool": "EditImageStyle", "args": {"style": "watercolor"}}], seed=2, context=ctx
    )
    again = compose(
        gen, [{"tool": "EditImageStyle", "args": {"style": "watercolor"}}], seed=2, context=ctx
    )
    assert np.array_equal(arr(styled.image), arr(again.image))
    assert styled.provenance["renderer"].startswith("diffusion:")
    assert styled.provenance["renderer_identity"]["steps"] == 1
