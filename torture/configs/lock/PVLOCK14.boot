locktorture.torture_type=mutex_lock locktorture.pi_check=1 locktorture.nested_locks=4 locktorture.rt_boost_factor=10 locktorture.stat_interval=15
