"""The terminal table (`fangcheng play`): one person against three bots, drawn with
textual (the optional `play` extra).
"""
