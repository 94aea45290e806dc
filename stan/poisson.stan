// Weighted (pseudo posterior) Poisson synthesizer.
//
//   y_i ~ Poisson(lambda), each record's log-likelihood multiplied by its weight alpha_i in [0, 1].
//   Prior: lambda ~ Gamma(prior_shape, prior_rate) (shape-rate). The ppmlib default is
//   Gamma(1, 0.001): an exponential with mean 1000, weak for counts of the size used in the book.
//   With this conjugate prior the alpha-weighted posterior is exactly
//   Gamma(prior_shape + sum(alpha_i y_i), prior_rate + sum(alpha_i)), which the tests check.
//
// Data: weights are data, so one compiled program serves every weighting scheme.
// emit_log_lik = 1 also writes the unweighted per-record log-likelihood with Stan's own
// poisson_lpmf (used by the tests to check ppmlib's numpy version); 0 keeps the output small.
data {
  int<lower=1> n;
  array[n] int<lower=0> y;
  vector<lower=0, upper=1>[n] weights;
  real<lower=0> prior_shape;
  real<lower=0> prior_rate;
  int<lower=0, upper=1> emit_log_lik;
}
transformed data {
  // The weighted log-likelihood only needs these sums (sufficient statistics).
  real sum_w = sum(weights);
  real sum_wy = dot_product(weights, to_vector(y));
  real sum_w_lgamma = dot_product(weights, lgamma(to_vector(y) + 1));
}
parameters {
  real<lower=0> lambda;
}
model {
  lambda ~ gamma(prior_shape, prior_rate);
  target += sum_wy * log(lambda) - sum_w * lambda - sum_w_lgamma;
}
generated quantities {
  vector[emit_log_lik ? n : 0] log_lik;
  for (i in 1:(emit_log_lik ? n : 0)) {
    log_lik[i] = poisson_lpmf(y[i] | lambda);
  }
}
