// Weighted (pseudo posterior) normal linear regression synthesizer.
//
//   y_i ~ Normal(X_i beta, sigma), each record's log-likelihood multiplied by its weight
//   alpha_i in [0, 1]. X is the n x K design matrix (include a column of ones for an intercept).
//   Priors (weakly informative for data on a unit-to-tens scale, such as log income):
//     beta_k ~ Normal(0, prior_beta_sd)        ppmlib default sd 10
//     sigma  ~ Normal+(0, prior_sigma_sd)      ppmlib default sd 5
//
// Data: weights are data; emit_log_lik = 1 writes Stan's own unweighted normal_lpdf per record.
//
// Censoring (censor = 1, the strict mechanism of Hu, Williams and Savitsky 2022): record i then
// contributes u_i = clip(alpha_i * log p(y_i | beta, sigma) - censor_shift_i, -censor_bound,
// censor_bound), where censor_shift_i = alpha_i * r_i is its weighted centre (from the record's own
// values and public constants) and censor_bound = epsilon / 2; clip(x, -b, b) is written
// (|x + b| - |x - b|) / 2. With censor = 0, censor_shift is empty and the program is unchanged.
data {
  int<lower=1> n;
  int<lower=1> K;
  vector[n] y;
  matrix[n, K] X;
  vector<lower=0, upper=1>[n] weights;
  real<lower=0> prior_beta_sd;
  real<lower=0> prior_sigma_sd;
  int<lower=0, upper=1> emit_log_lik;
  int<lower=0, upper=1> censor;
  real<lower=0> censor_bound;
  vector[censor ? n : 0] censor_shift;
}
parameters {
  vector[K] beta;
  real<lower=0> sigma;
}
model {
  vector[n] z = (y - X * beta) / sigma;
  beta ~ normal(0, prior_beta_sd);
  sigma ~ normal(0, prior_sigma_sd);
  if (censor) {
    vector[n] u = weights .* (-0.5 * square(z) - log(sigma) - 0.5 * log(2 * pi())) - censor_shift;
    target += sum(0.5 * (abs(u + censor_bound) - abs(u - censor_bound)));
  } else {
    // weighted sum of the normal log densities, written out so it stays vectorised
    target += dot_product(weights, -0.5 * square(z)) - sum(weights) * (log(sigma) + 0.5 * log(2 * pi()));
  }
}
generated quantities {
  vector[emit_log_lik ? n : 0] log_lik;
  for (i in 1:(emit_log_lik ? n : 0)) {
    log_lik[i] = normal_lpdf(y[i] | X[i] * beta, sigma);
  }
}
