// Weighted (pseudo posterior) negative binomial synthesizer.
//
//   y_i ~ NegBinomial(mu, phi) with mean mu and variance mu + mu^2 / phi (Stan's neg_binomial_2),
//   each record's log-likelihood multiplied by its weight alpha_i in [0, 1].
//   Priors (weakly informative, scale-free for counts):
//     log(mu) ~ Normal(prior_log_mu_mean, prior_log_mu_sd)   ppmlib default Normal(0, 10)
//     1 / sqrt(phi) ~ Normal+(0, prior_inv_sqrt_phi_sd)      ppmlib default sd 1
//   (the half-normal on 1/sqrt(phi) is the usual weakly informative choice for overdispersion:
//   it puts mass on Poisson-like data without excluding strong overdispersion).
//
// Data: weights are data. Counts repeat, so the weighted log-likelihood is evaluated once per
// distinct value with the summed weights of its records (value_weights[k] = sum of alpha_i over
// the records with y_i = values[k]); ppmlib computes these from y and weights. This is exact and
// several times faster than a loop over records. emit_log_lik = 1 also sends the n records y and
// writes Stan's own unweighted neg_binomial_2_lpmf per record (the tests compare ppmlib's numpy
// version with it); with 0, y is empty, so the data sent to Stan does not grow with n.
//
// Censoring (censor = 1, the strict mechanism of Hu, Williams and Savitsky 2022): record i then
// contributes u_i = clip(alpha_i * log p(y_i | mu, phi) - shift_i, -censor_bound, censor_bound),
// where shift_i = alpha_i * r_i is its weighted centre (from the record's own value and public
// constants) and censor_bound = epsilon / 2. A clipped term is not linear in the weight, so the
// records come as groups of equal (value, weight, shift) instead of value_weights (which ppmlib
// then sends empty). clip(x, -b, b) is written fmin(fmax(x, -b), b).
data {
  int<lower=1> n;
  int<lower=0, upper=1> emit_log_lik;
  array[emit_log_lik ? n : 0] int<lower=0> y;
  int<lower=0> n_values;
  array[n_values] int<lower=0> values;
  vector<lower=0>[n_values] value_weights;
  real prior_log_mu_mean;
  real<lower=0> prior_log_mu_sd;
  real<lower=0> prior_inv_sqrt_phi_sd;
  int<lower=0, upper=1> censor;
  real<lower=0> censor_bound;
  int<lower=0> n_groups;
  array[censor ? n_groups : 0] int<lower=0> group_values;
  vector<lower=0>[censor ? n_groups : 0] group_sizes;
  vector<lower=0>[censor ? n_groups : 0] group_weights;
  vector[censor ? n_groups : 0] group_shifts;
}
parameters {
  real log_mu;
  real<lower=0> inv_sqrt_phi;
}
transformed parameters {
  real<lower=0> mu = exp(log_mu);
  real<lower=0> phi = inv_square(inv_sqrt_phi);
}
model {
  log_mu ~ normal(prior_log_mu_mean, prior_log_mu_sd);
  inv_sqrt_phi ~ normal(0, prior_inv_sqrt_phi_sd);
  for (k in 1:n_values) {
    target += value_weights[k] * neg_binomial_2_log_lpmf(values[k] | log_mu, phi);
  }
  if (censor) {
    vector[n_groups] u;
    for (k in 1:n_groups) {
      u[k] = group_weights[k] * neg_binomial_2_log_lpmf(group_values[k] | log_mu, phi) - group_shifts[k];
    }
    target += dot_product(group_sizes, fmin(fmax(u, -censor_bound), censor_bound));
  }
}
generated quantities {
  vector[emit_log_lik ? n : 0] log_lik;
  for (i in 1:(emit_log_lik ? n : 0)) {
    log_lik[i] = neg_binomial_2_lpmf(y[i] | mu, phi);
  }
}
