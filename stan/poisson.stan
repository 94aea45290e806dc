// Weighted (pseudo posterior) Poisson synthesizer.
//
//   y_i ~ Poisson(lambda), each record's log-likelihood multiplied by its weight alpha_i in [0, 1].
//   Prior: lambda ~ Gamma(prior_shape, prior_rate) (shape-rate). The ppmlib default is
//   Gamma(1, 0.001): an exponential with mean 1000, weak for counts of the size used in the book.
//   With this conjugate prior the alpha-weighted posterior is exactly
//   Gamma(prior_shape + sum(alpha_i y_i), prior_rate + sum(alpha_i)), which the tests check.
//
// Data: the weighted log-likelihood sum_i alpha_i (y_i log(lambda) - lambda - lgamma(y_i + 1))
// depends on the data only through three sums (sufficient statistics), which ppmlib computes from
// y and the weights alpha: sum_w = sum(alpha_i), sum_wy = sum(alpha_i y_i) and the constant
// sum_w_lgamma = sum(alpha_i lgamma(y_i + 1)) (kept so that lp__ is the weighted log density).
// So the data sent to Stan does not grow with n, and one compiled program serves every weighting.
// emit_log_lik = 1 also sends the n records and writes the unweighted per-record log-likelihood
// with Stan's own poisson_lpmf (the tests check ppmlib's numpy version against it); with 0, y is
// empty.
data {
  int<lower=1> n;
  real<lower=0> sum_w;
  real<lower=0> sum_wy;
  real sum_w_lgamma;
  real<lower=0> prior_shape;
  real<lower=0> prior_rate;
  int<lower=0, upper=1> emit_log_lik;
  array[emit_log_lik ? n : 0] int<lower=0> y;
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
