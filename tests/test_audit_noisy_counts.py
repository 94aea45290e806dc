"""The audit chapter's attack on the noisy-counts release (the command's default strict scheme): the
lower bound it proves stays at or below the counts' epsilon and comes close to it, so the noise is
neither smaller (the guarantee would break) nor much larger than the one stated."""
import numpy as np
import pytest

from ppmlib.studies import privacy_audit


@pytest.mark.parametrize("epsilon", [1.0, 2.0])
def test_the_attack_proves_nearly_all_of_epsilon_and_never_more(epsilon):
    y = np.random.default_rng(1).poisson(100, 1000) + 0.0
    bound = privacy_audit.audit_noisy_counts(y, epsilon, trials=10000, seed=3)
    assert 0.7 * epsilon < bound.epsilon <= epsilon
