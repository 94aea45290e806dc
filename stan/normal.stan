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
// fmin(fmax(x, -b), b). With censor = 0, censor_shift is empty and the program is unchanged.
//
// Sufficient statistics (sufficient = 1): the weighted log-likelihood is exactly
//   -0.5 (yWy - 2 beta' XWy + beta' XWX beta) / sigma^2 - sum_w (log sigma + 0.5 log 2 pi),
// with sum_w = sum_i alpha_i, XWX = sum_i alpha_i x_i x_i', XWy = sum_i alpha_i x_i y_i and
// yWy = sum_i alpha_i y_i^2. Then y, X and weights are sent empty (size 0), the fit's cost does not
// grow with n, and emit_log_lik and censor must be 0. With sufficient = 0 the four sums are sent empty.
data {
  int<lower=1> n;
  int<lower=1> K;
  int<lower=0, upper=1> sufficient;
  vector[sufficient ? 0 : n] y;
  matrix[sufficient ? 0 : n, K] X;
  vector<lower=0, upper=1>[sufficient ? 0 : n] weights;
  array[sufficient] real<lower=0> sum_w;
  matrix[sufficient ? K : 0, sufficient ? K : 0] XWX;
  vector[sufficient ? K : 0] XWy;
  array[sufficient] real<lower=0> yWy;
  real<lower=0> prior_beta_sd;
  real<lower=0> prior_sigma_sd;
  int<lower=0, upper=1 - sufficient> emit_log_lik;
  int<lower=0, upper=1 - sufficient> censor;
  real<lower=0> censor_bound;
  vector[censor ? n : 0] censor_shift;
}
parameters {
  vector[K] beta;
  real<lower=0> sigma;
}
model {
  beta ~ normal(0, prior_beta_sd);
  sigma ~ normal(0, prior_sigma_sd);
  if (sufficient) {
    // the weighted residual sum of squares from the sums (exact algebra, not an approximation)
    real rss = yWy[1] - 2 * dot_product(beta, XWy) + quad_form(XWX, beta);
    target += -0.5 * rss / square(sigma) - sum_w[1] * (log(sigma) + 0.5 * log(2 * pi()));
  } else {
    vector[n] z = (y - X * beta) / sigma;
    if (censor) {
      vector[n] u = weights .* (-0.5 * square(z) - log(sigma) - 0.5 * log(2 * pi())) - censor_shift;
      target += sum(fmin(fmax(u, -censor_bound), censor_bound));
    } else {
      // weighted sum of the normal log densities, written out so it stays vectorised
      target += dot_product(weights, -0.5 * square(z)) - sum(weights) * (log(sigma) + 0.5 * log(2 * pi()));
    }
  }
}
generated quantities {
  vector[emit_log_lik ? n : 0] log_lik;
  for (i in 1:(emit_log_lik ? n : 0)) {
    log_lik[i] = normal_lpdf(y[i] | X[i] * beta, sigma);
  }
}
