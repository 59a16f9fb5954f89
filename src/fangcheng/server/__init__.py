"""The table server (`fangcheng serve`): sessions, the lobby, private and practice
tables (`tables`), the protocol's websocket and HTTP calls (`app`), stored hands
(`store`), tokens, limits and logs (`security`), and the reference outside-bot client
(`botclient`). Only `fangcheng.cli` may import it; it alone imports `fangcheng.platform`.
"""
