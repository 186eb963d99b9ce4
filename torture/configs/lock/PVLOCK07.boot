pi_football.lock=rt_mutex pi_football.mode=football
