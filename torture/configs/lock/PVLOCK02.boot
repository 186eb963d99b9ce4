locktorture.torture_type=pv_mutex_lock locktorture.nested_locks=4 locktorture.rt_boost=1 locktorture.rt_boost_factor=5 locktorture.nwriters_stress=6 locktorture.stat_interval=15
