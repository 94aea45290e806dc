// Noise-aware posterior of a normal cell model from noisy sufficient statistics
// (Bernstein and Sheldon 2018; ppmlib.mechanism.nss).
//
// The records' outcome z_i (log y scaled into [-1, 1] by public bounds and clipped) lies in one of
// C public cells (the cross-classification of the keys). The release holds, per cell,
//   S_c = sum_{i in c} z_i + N(0, noise_S^2),   Q_c = sum_{i in c} z_i^2 + N(0, noise_Q^2).
// Model: z_i ~ Normal(mu_c, sigma) in its cell, with
//   mu_c = b0 + sum_k a_k[level of key k in c] + tau_cell e_c: the keys' main effects (every level's
//   effect is informed by all the cells that share it, so sparse cells borrow strength), each key's
//   summing to zero so that b0 is the mean, with a fixed Normal(0, 0.5) prior on the z scale (a
//   hierarchical scale per key made NUTS diverge: most keys have two levels); and, with
//   cell_effects, a non-centred deviation per cell with a hierarchical scale tau_cell.
// Likelihood (the CLT, as Bernstein and Sheldon): (S_c, Q_c) ~ bivariate normal with mean
// n_c (mu_c, mu_c^2 + sigma^2) and covariance n_c Cov(z, z^2) + diag(noise_S^2, noise_Q^2), with the
// normal's moments Var z = sigma^2, Cov(z, z^2) = 2 mu sigma^2, Var z^2 = 4 mu^2 sigma^2 + 2 sigma^4.
// Clipping is ignored by the model. With no noise the likelihood approximates the exact normal one
// (the tests compare the posterior with the exact one by quadrature).
data {
  int<lower=1> C;                          // cells with records
  int<lower=0> K;                          // keys
  array[K] int<lower=1> L;                 // levels per key
  array[C, K] int<lower=1> level;          // each cell's level of each key
  vector<lower=1>[C] n;                    // records per cell (public)
  vector[C] S;                             // noisy sums of z
  vector[C] Q;                             // noisy sums of z^2
  real<lower=0> noise_S;                   // the Gaussian noise's standard deviations
  real<lower=0> noise_Q;
  int<lower=0, upper=1> cell_effects;      // 1: a deviation per cell beside the main effects
}
transformed data {
  int A = sum(L);
  array[K] int start;                      // key k's levels are a[start[k] + 1 : start[k] + L[k]]
  for (k in 1:K) start[k] = k == 1 ? 0 : start[k - 1] + L[k - 1];
}
parameters {
  real b0;
  real<lower=0> sigma;
  vector[A - K] a_free;                    // L_k - 1 free levels per key; the last is minus their sum
  real<lower=0> tau_cell;
  vector[cell_effects ? C : 0] e_raw;
}
transformed parameters {
  vector[A] a_raw;
  for (k in 1:K) {
    a_raw[(start[k] + 1):(start[k] + L[k] - 1)] = a_free[(start[k] - k + 2):(start[k] - k + L[k])];
    a_raw[start[k] + L[k]] = -sum(a_free[(start[k] - k + 2):(start[k] - k + L[k])]);
  }
  vector[C] mu = rep_vector(b0, C);
  for (c in 1:C) {
    for (k in 1:K) mu[c] += a_raw[start[k] + level[c, k]];
    if (cell_effects) mu[c] += tau_cell * e_raw[c];
  }
}
model {
  b0 ~ normal(0, 1);
  sigma ~ normal(0, 0.5);
  tau_cell ~ normal(0, 0.25);
  a_free ~ normal(0, 0.5);
  e_raw ~ std_normal();
  {
    vector[C] s2 = square(sigma) * n;
    vector[C] v11 = s2 + square(noise_S);
    vector[C] v12 = 2 * mu .* s2;
    vector[C] v22 = (4 * square(mu) + 2 * square(sigma)) .* s2 + square(noise_Q);
    vector[C] d1 = S - n .* mu;
    vector[C] d2 = Q - n .* (square(mu) + square(sigma));
    vector[C] det = v11 .* v22 - square(v12);
    // bivariate normal log density, cell by cell, written out (vectorised)
    target += -0.5 * sum((v22 .* square(d1) - 2 * v12 .* d1 .* d2 + v11 .* square(d2)) ./ det)
              - 0.5 * sum(log(det)) - C * log(2 * pi());
  }
}
