"""The one place that tells the world a run moved: pointers on the outputs queue (workflow outputs, push), and the
checked HTTP POST their senders share. The engine calls `announce` when a run ends and when it pauses."""
