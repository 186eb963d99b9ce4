pi_football.lock=pv_mutex pi_football.mode=football
