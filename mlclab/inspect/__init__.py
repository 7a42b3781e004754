"""Looking at a compiled function: its texts (one module per style) and its pipeline, pass by
pass. The graphs live beside it in ``mlclab.viz``."""
