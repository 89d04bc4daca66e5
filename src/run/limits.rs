//! Process resource limits a run needs (open files for many targets and rings).
