"""01.2 (TRK-3, TRK-10): live, the call site includes the bytecode offset, so the two `sin`
calls on one line get different keys; offline, `stack_trace` gives file and line only, so
they share one."""

LIVE_SAME_KEY = False
OFFLINE_SAME_KEY = True
