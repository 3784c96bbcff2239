"""The ground floor every run-touching module reads: a run's frozen spec, its tools' deps and its governance labels."""
