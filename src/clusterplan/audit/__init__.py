"""The topology audit: the node tools' text parsed (``parsers``), judged against the design (``checks``),
and collected on a live node without root or a GPU (``probe``). See docs/accept.md."""
