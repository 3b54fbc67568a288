"""ALLELE_REQUIRE_ISOLATION's values (docs/deploy.md#isolation-per-measure): which missing measures keep
a worker from starting. A typo or an unknown measure is refused, so a setting never weakens by mistake."""

import pytest

from allele_worker.sandbox.host import IsolationMissing, required_gaps

MISSING = ["pid_namespace", "cgroup", "rlimit:nproc"]


def test_all_requires_every_measure():
    assert required_gaps(MISSING, "all") == MISSING
    assert required_gaps([], "all") == []


def test_unset_requires_none():
    assert required_gaps(MISSING, "") == []


def test_all_except_lets_only_the_named_measures_go():
    assert required_gaps(MISSING, "all-except:pid_namespace,cgroup") == ["rlimit:nproc"]
    assert required_gaps(MISSING, "all-except: cgroup , rlimit:nproc ") == ["pid_namespace"]
    assert required_gaps(MISSING, "all-except:") == MISSING


@pytest.mark.parametrize("setting", ["yes", "ALL", "all-except:cgroups", "all-except:rlimit:stack", "none"])
def test_any_other_value_is_refused(setting):
    with pytest.raises(IsolationMissing, match="ALLELE_REQUIRE_ISOLATION"):
        required_gaps(MISSING, setting)
