"""For AI research: the simulator (`fangcheng.ai.sim`, local processes or Ray) and the
Gymnasium / PettingZoo environments (`fangcheng.ai.env`, the optional `rl` extra).
"""
