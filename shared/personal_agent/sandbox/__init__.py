"""Code execution: a sandbox behind one interface (a local isolated subprocess, or a dedicated function on AWS)."""
