pi_football.lock=mutex pi_football.mode=football
