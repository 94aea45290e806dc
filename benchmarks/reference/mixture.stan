// Weighted (pseudo posterior) finite mixture of normal regressions, for log income.
//
//   y_i ~ sum_k pi_k Normal(X_i beta_k, sigma_k),   k = 1..K (K is data: an upper bound on the
//   number of clusters, set deliberately too large), with the cluster indicators summed out by
//   log_sum_exp; each record's mixture log-density is multiplied by its weight alpha_i in [0, 1].
//   X is the n x P design matrix (include a column of ones for an intercept); every component
//   has its own coefficient vector beta_k and scale sigma_k (the CE paper's Appendix 6.1).
//   Priors (weakly informative on the log-income scale, where a coefficient of 2 multiplies
//   income by about 7; a nearly empty component is drawn almost from its prior, so a vague prior
//   would put absurd incomes into the synthetic data):
//     pi (mixing)   ~ Dirichlet(dirichlet_concentration, ..., dirichlet_concentration)
//                     a concentration below 1 is sparse: it empties the components it does not need
//                     ppmlib defaults K = 3, concentration 0.5
//     beta_k[1]     ~ Normal(prior_intercept_mean, prior_beta_sd)   (the intercept column; default mean 11)
//     beta_k[p > 1] ~ Normal(0, prior_beta_sd)                      ppmlib default sd 1
//     sigma_k       ~ Normal+(0, prior_sigma_sd)                    ppmlib default sd 1
//   (The paper puts a multivariate normal with an LKJ-type correlation on beta_k and Student-t
//   scales; independent normals keep this program short and are stated here instead.)
//   Labels are not ordered: the components can swap between chains (label switching), which
//   changes neither the mixture density nor the synthetic data, so convergence is judged on
//   label-invariant quantities (ppmlib's Mixture family says which).
//
// Data: weights are data; emit_log_lik = 1 writes Stan's own unweighted mixture log-density per
// record (the marginal over the K components).
data {
  int<lower=1> n;
  int<lower=1> P;
  int<lower=1> K;
  vector[n] y;
  matrix[n, P] X;
  vector<lower=0, upper=1>[n] weights;
  real<lower=0> dirichlet_concentration;
  real prior_intercept_mean;
  real<lower=0> prior_beta_sd;
  real<lower=0> prior_sigma_sd;
  int<lower=0, upper=1> emit_log_lik;
}
parameters {
  simplex[K] mixing;   // the mixture weights pi_k
  matrix[P, K] beta;          // column k holds component k's coefficients
  vector<lower=0>[K] sigma;
}
model {
  matrix[n, K] mu = X * beta;
  vector[K] log_pi = log(mixing);
  mixing ~ dirichlet(rep_vector(dirichlet_concentration, K));
  beta[1] ~ normal(prior_intercept_mean, prior_beta_sd);
  if (P > 1) to_vector(beta[2:P]) ~ normal(0, prior_beta_sd);
  sigma ~ normal(0, prior_sigma_sd);
  // log_mix[i] = log sum_k pi_k Normal(y_i | mu_ik, sigma_k), accumulated one component at a
  // time with the elementwise two-argument log_sum_exp, so it stays vectorised over records
  vector[n] log_mix = log_pi[1] - log(sigma[1]) - 0.5 * log(2 * pi()) - 0.5 * square((y - mu[:, 1]) / sigma[1]);
  for (k in 2:K) {
    log_mix = log_sum_exp(log_mix, log_pi[k] - log(sigma[k]) - 0.5 * log(2 * pi())
                                   - 0.5 * square((y - mu[:, k]) / sigma[k]));
  }
  target += dot_product(weights, log_mix);
}
generated quantities {
  vector[emit_log_lik ? n : 0] log_lik;
  if (emit_log_lik) {
    matrix[n, K] mu = X * beta;
    for (i in 1:n) {
      vector[K] lp = log(mixing);
      for (k in 1:K) lp[k] += normal_lpdf(y[i] | mu[i, k], sigma[k]);
      log_lik[i] = log_sum_exp(lp);
    }
  }
}
