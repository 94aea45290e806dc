// Weighted (pseudo posterior) heteroskedastic normal regression synthesizer.
//
//   y_i ~ Normal(X_i beta, exp(X_i gamma)), each record's log-likelihood multiplied by its weight
//   alpha_i in [0, 1]: the mean and the log scale are both regressions on the design X (whose
//   first column is the intercept). On a design of categorical predictors and their interactions,
//   every cell of levels has its own mean and its own spread.
//   Priors (for data on the log scale, such as log income):
//     beta_k  ~ Normal(0, prior_beta_sd)                       ppmlib default sd 10
//     gamma_1 ~ Normal(0, prior_log_sigma_sd)  (log scale)     ppmlib default sd 2
//     gamma_k ~ Normal(0, prior_gamma_sd), k > 1               ppmlib default sd 1
//
// Data: weights are data; emit_log_lik = 1 writes Stan's own unweighted normal_lpdf per record.
//
// Censoring (censor = 1, the strict mechanism, as in normal.stan): record i contributes
// u_i = clip(alpha_i * log p(y_i | beta, gamma) - censor_shift_i, -censor_bound, censor_bound),
// clip(x, -b, b) written fmin(fmax(x, -b), b). With censor = 0, censor_shift is empty.
//
// Cells (cells > 0): records with equal rows of X share their mean and scale, so the weighted
// log-likelihood is exactly a function of each distinct row's sums sum_w, sum_wy, sum_wyy:
//   -0.5 (sum_wyy - 2 mu sum_wy + mu^2 sum_w) / sigma^2 - sum_w (log sigma + 0.5 log 2 pi).
// Then y, X and weights go empty (n_records = 0), the fit's cost grows with the number of cells,
// not of records, and emit_log_lik and censor must be 0.
data {
  int<lower=1> n;
  int<lower=1> K;
  int<lower=0> cells;
  int<lower=0> n_records;             // n, or 0 when the cells' sums are sent
  vector[n_records] y;
  matrix[n_records, K] X;
  vector<lower=0, upper=1>[n_records] weights;
  matrix[cells, K] cell_X;
  vector<lower=0>[cells] cell_w;
  vector[cells] cell_wy;
  vector<lower=0>[cells] cell_wyy;
  real<lower=0> prior_beta_sd;
  real<lower=0> prior_log_sigma_sd;
  real<lower=0> prior_gamma_sd;
  int<lower=0, upper=1> emit_log_lik;
  int<lower=0, upper=1> censor;
  real<lower=0> censor_bound;
  vector[censor ? n_records : 0] censor_shift;
}
parameters {
  vector[K] beta;
  vector[K] gamma;
}
model {
  beta ~ normal(0, prior_beta_sd);
  gamma[1] ~ normal(0, prior_log_sigma_sd);
  gamma[2:K] ~ normal(0, prior_gamma_sd);
  if (cells > 0) {
    vector[cells] mu = cell_X * beta;
    vector[cells] log_sigma = cell_X * gamma;
    vector[cells] rss = cell_wyy - 2 * mu .* cell_wy + square(mu) .* cell_w;
    target += sum(-0.5 * rss .* exp(-2 * log_sigma) - cell_w .* (log_sigma + 0.5 * log(2 * pi())));
  } else {
    vector[n_records] log_sigma = X * gamma;
    vector[n_records] ll = -0.5 * square((y - X * beta) .* exp(-log_sigma)) - log_sigma - 0.5 * log(2 * pi());
    if (censor) {
      vector[n_records] u = weights .* ll - censor_shift;
      target += sum(fmin(fmax(u, -censor_bound), censor_bound));
    } else {
      target += dot_product(weights, ll);
    }
  }
}
generated quantities {
  vector[emit_log_lik ? n_records : 0] log_lik;
  for (i in 1:(emit_log_lik ? n_records : 0)) {
    log_lik[i] = normal_lpdf(y[i] | X[i] * beta, exp(X[i] * gamma));
  }
}
