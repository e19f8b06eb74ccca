"""The pixel layer every image feature shares; it imports nothing of lmmprobe but `schema`.

- `colors`: Dysca's eight colour names, their fill shades and the print attack's palette;
- `vocab`: what can be drawn: glyph classes in groups, shapes, words, backgrounds, styles,
  weathers, positions;
- `shapes`: the ``demo-shapes`` recipe renderer (the demo source's pictures);
- `procedural`: the ``synth-procedural`` recipe renderer (Noto Emoji glyphs from ``fonts/``,
  shapes and words on procedural backgrounds, with weathers and styles) and the helpers APEx's
  image tools draw with;
- `corruptions`: Dysca's 11 seeded corruptions; `print_attack`: Dysca's print attack;
- `scenario`: drawing and applying a recorded Dysca scenario.

The data sources (`lmmprobe.data`), the image tools (`lmmprobe.tools`) and the synthetic
benchmark (`lmmprobe.synth`) draw through these modules. Each renderer registers itself with
`lmmprobe.schema.register_renderer` when its module is imported, so the modules are imported one
by one where they are needed rather than all from here.
"""
