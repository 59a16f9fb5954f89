"""The coin platform (next): accounts, the double-entry ledger, rooms, stakes and
ranks. Only `fangcheng.server` may import it.
"""
