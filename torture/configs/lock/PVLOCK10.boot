pi_football.lock=rt_mutex pi_football.mode=chain pi_football.hold_us=20000 pi_football.game_ms=500 pi_football.slack_pct=1
