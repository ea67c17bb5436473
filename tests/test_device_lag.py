"""The judge's check for work left outside the given stream reads host time around a
device-wide sync; a host stall once (a GC pause, the scheduler) must not fail an honest
kernel, and work that lags every time must still fail (the GPU side: test_judge_gpu.py)."""

from socratic.evaluator.worker import FOREIGN_WORK_S, lasting_lag


def lags(*values: float):
    seen = list(values)
    return lambda: seen.pop(0)


def test_no_lag_runs_nothing_again():
    again = []
    assert lasting_lag(lags(0.0001), lambda: again.append(1)) == 0.0001
    assert again == []


def test_one_host_stall_is_measured_again_and_forgiven():
    again = []
    lag = lasting_lag(lags(0.0037, 0.0002), lambda: again.append(1))
    assert again == [1]
    assert lag <= FOREIGN_WORK_S


def test_work_that_lags_every_time_still_fails():
    again = []
    lag = lasting_lag(lags(0.010, 0.008), lambda: again.append(1))
    assert again == [1]
    assert lag == 0.008 > FOREIGN_WORK_S
