"""The table server (next): lobby, tables, timers, reconnects and spectators over
websockets. Only `fangcheng.cli` may import it; it alone imports `fangcheng.platform`.
"""
