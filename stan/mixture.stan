// Weighted (pseudo posterior) finite mixture of normal regressions, for log income.
//
//   y_i ~ sum_k pi_k Normal(X_i beta_k, sigma_k),   k = 1..K (K is data: an upper bound on the
//   number of clusters, set deliberately too large), with the cluster indicators summed out by
//   log_sum_exp; each record's mixture log-density is multiplied by its weight alpha_i in [0, 1].
//   X is the n x P design matrix; its first column must be the intercept (ones) and its columns
//   linearly independent (ppmlib checks both). Every component has its own scale sigma_k and
//   centre, and (shared_slopes = 0, the CE paper's Appendix 6.1) its own coefficients beta_k.
//
// How it is parametrised (the density of y is the mixture above whatever the parametrisation;
// only how NUTS moves changes):
//   * A centred QR design. The non-intercept columns are centred (Xc = X[, 2:P] - column means)
//     and factored Xc = Q R with Q'Q = (n - 1) I. Component k's mean for record i is
//     centre_k + Q_i theta_k: centre_k is the component's mean log income averaged over the
//     records, theta_k its coefficients on orthogonal, unit-variance columns, so the posterior
//     of (centre, theta) has no correlation from the design (one-hot columns and the intercept
//     are strongly correlated, and nested predictors are collinear). beta_k (intercept first,
//     on the columns of X) is computed back exactly: beta_k[2:P] = R^-1 theta_k,
//     beta_k[1] = centre_k - colmeans . beta_k[2:P].
//   * Components ordered by scale, sigma_1 < ... < sigma_K. A permutation of the components
//     leaves the mixture density unchanged, so the unconstrained posterior has K! copies of every
//     mode and the chains visit different copies (label switching). Ordering picks one copy. It
//     is harmless here because nothing downstream depends on the labels: the records'
//     log-likelihoods (the marginal mixture density), the bounds, Delta, the synthetic data and
//     the diagnostics (computed on label-invariant quantities) are all sums over components; the
//     prior below is exchangeable, so ordering changes it only by the constant K!. Why the scales
//     and not the centres: log income is a narrow bulk with heavy tails, and the components that
//     describe the bulk share nearly the same centre and differ in spread; ordering by centre
//     cut through the posterior where two centres cross (measured: R-hat 1.22 and 111
//     divergences in 2 x 300 draws at the paper's size, against 14 ordering by scale).
//   * The centres non-centred on the scale of their own posterior. Given component k's weight
//     pi_k and scale sigma_k, its centre's posterior sd is about
//       centre_scale_k = (1 / prior_centre_sd^2 + W pi_k / sigma_k^2)^(-1/2),   W = sum of the weights,
//     from a few hundredths for a component holding many records to prior_centre_sd for an empty
//     one. The program samples centre_z_k = (centre_k - prior_centre_mean) / centre_scale_k and
//     adds the Jacobian, so the prior on centre_k is exactly the one stated below. Sampling
//     centre_k itself is a funnel: as a component empties its centre's posterior widens 20-50
//     times, and the divergences of the centred program were there (small components, a narrow
//     one at 6% off the bulk's centre, the wide tail component of the tiny incomes). Measured
//     (ten predictors, K = 3, 2 x 1000 draws after 1000 warmup, Dirichlet(3), the default then): on a
//     stand-in with 1% tiny incomes, 4 divergences and tail ESS 39 of the sorted scales centred,
//     0 and 384 non-centred.
//   * shared_slopes = 1 (ppmlib's default): one theta for all components, which then differ in
//     centre and scale only (a regression whose error is a mixture of normals). With
//     shared_slopes = 0 every component has its own theta_k, as in the paper; with ten
//     predictors a component holding a few percent of the records then has about as many
//     coefficients as records, and such fits did not pass ppmlib's diagnostics gate in our runs
//     (2 x 300 draws at the paper's size: R-hat 1.16, bulk ESS 9).
//
//   * With shared slopes, each component's log density is written as a quadratic in the record's
//     residual, so the n x K log densities are one matrix product (see the model block); this
//     changes the arithmetic, not the density, and is what makes a gradient cheap.
//
// Priors (weakly informative on the log-income scale; chosen so that a component the data leave
// nearly empty stays at plausible incomes and the sampler keeps a simple geometry there):
//     pi (mixing)   ~ Dirichlet(dirichlet_concentration, ...)     ppmlib: K = 3, concentration 6
//     centre_k      ~ Normal(prior_centre_mean, prior_centre_sd)  ppmlib: 11, 1 (about $60,000, x/ e)
//     theta_k[j]    ~ Normal(0, prior_spread_sd / sqrt(P - 1))    ppmlib: 1; the spread of a
//                     component's means over the records (sd of Q_i theta_k) has prior sd about
//                     prior_spread_sd, whatever the number of predictors
//     sigma_k       ~ InvGamma(5, 4 * prior_sigma_mean)           ppmlib: mean 1, median 0.86;
//                     P(sigma < 0.3) = 0.3%, P(sigma > 4) = 0.4%. Its density vanishes faster
//                     than any power at sigma = 0, so no component collapses onto a few records
//                     (the degenerate spikes of mixtures of normals), and its tail is a power law,
//                     so a wide component for tiny incomes stays possible (sigma about 3.7-4.2 on
//                     a stand-in with 1% tiny incomes). Measured on the paper's design: the
//                     Gamma(2, 2) tried first vanishes only linearly at 0, and under a flat
//                     likelihood (every weight 0.2) a narrow component (sigma 0.15, 5% of the
//                     records) formed: 33 divergences in 2,000 iterations; InvGamma(3, 2): 1,
//                     and 11 in 13 fits, where the narrowest component held 4-16% of the records
//                     at sigma 0.18-0.5; InvGamma(5, 4): see README.
//   The mixing prior is NOT sparse by default. The CE paper's Dirichlet has a concentration below
//   1, so that spare components empty and the finite mixture approaches a Dirichlet process
//   mixture; an emptied component is drawn from its prior, and its weight, centre and scale form
//   funnels that NUTS cannot cross: Dirichlet(0.5) gave 3 divergences in 2,000 iterations on the
//   shipped stand-in and 22 (R-hat 1.04) on one with 1% tiny incomes, and, non-centred, still
//   R-hat 1.016 and tail ESS 146 there. A concentration above 1 keeps every component populated:
//   a component the data do not need shares the bulk with another (their sum is what the data
//   see), which changes neither the family of densities nor, visibly, the fitted density. Why 6
//   and not 3 (the earlier default): on the stand-in with 1% tiny incomes, at the
//   paper's size, Dirichlet(3) still let the narrowest component's weight drift low (divergences
//   where sigma_1 ~ 0.4 held ~30% or less); Dirichlet(6), five pseudo-records per component
//   against 994 records, keeps it away from there: at adapt_delta 0.8, 1 divergent fit in 12
//   against 6 in 12 (4 seeds x unweighted, LW, SW), and at 0.9 1 divergence in 18 fits, with
//   fewer leapfrog steps in the unweighted fit (62-94k against 123k). The wide tail component
//   (about 2% of the records) gets a prior mean weight of 1/3 from it, worth 5 records. A
//   sparse prior is one setting away (prior={"dirichlet_concentration": 0.5}), for studying it.
//   The paper puts a multivariate normal with an LKJ prior on each component's coefficients and
//   Student-t priors on the scales; we state ours instead: independent normals on the orthogonal
//   coefficients (a diagonal covariance in the QR basis), and a zero-avoiding inverse Gamma on
//   sigma (ordered: the K scales are the order statistics of K such draws, up to the constant K!).
//   Tried and dropped: a prior pushing the ordered scales apart (log(sigma_k / sigma_k-1) ~
//   Gamma(2, 4)) leaves the spare component nothing to do, so it empties: 171 divergences.
//
// Data: weights are data; emit_log_lik = 1 writes Stan's own unweighted mixture log-density per
// record (the marginal over the K components), computed from beta and X as ppmlib does in numpy.
//
// Censoring (censor = 1, the strict mechanism of Hu, Williams and Savitsky 2022): record i then
// contributes u_i = clip(alpha_i * log_mix_i - censor_shift_i, -censor_bound, censor_bound), where
// log_mix_i is its mixture log-density, censor_shift_i = alpha_i * r_i its weighted centre (from
// the record's own values and public constants) and censor_bound = epsilon / 2; clip(x, -b, b) is
// written fmin(fmax(x, -b), b). The centres' non-centring scale still uses the total weight: it
// is a reparametrisation, so it changes how NUTS moves, not the density.
data {
  int<lower=1> n;
  int<lower=1> P;
  int<lower=1> K;
  vector[n] y;
  matrix[n, P] X;
  vector<lower=0, upper=1>[n] weights;
  real<lower=0> dirichlet_concentration;
  real prior_centre_mean;
  real<lower=0> prior_centre_sd;
  real<lower=0> prior_spread_sd;
  real<lower=0> prior_sigma_mean;
  int<lower=0, upper=1> shared_slopes;  // 1: one theta for all components (they differ in centre and scale)
  int<lower=0, upper=1> emit_log_lik;
  int<lower=0, upper=1> censor;
  real<lower=0> censor_bound;
  vector[censor ? n : 0] censor_shift;
}
transformed data {
  int J = P - 1;                       // non-intercept columns
  row_vector[J] column_means;
  matrix[n, J] Q;
  matrix[J, J] R_inverse;
  real theta_sd = J > 0 ? prior_spread_sd / sqrt(J) : 1;
  real log_norm = -0.5 * log(2 * pi());
  real total_weight = sum(weights);     // the records' weight: how much data the centres see
  vector[n] y_shifted = y - prior_centre_mean;
  vector[n] ones = rep_vector(1, n);
  if (J > 0) {
    matrix[n, J] centred;
    for (j in 1:J) {
      column_means[j] = mean(X[:, j + 1]);
      centred[:, j] = X[:, j + 1] - column_means[j];
    }
    Q = qr_thin_Q(centred) * sqrt(n - 1.0);
    R_inverse = inverse(qr_thin_R(centred) / sqrt(n - 1.0));
  }
}
parameters {
  simplex[K] mixing;          // the mixture weights pi_k
  vector[K] centre_z;         // the centres, each on the scale of its own posterior (see the header)
  matrix[J, shared_slopes ? 1 : K] theta;   // column k: component k's coefficients on the QR columns
  positive_ordered[K] sigma;  // the components' scales, smallest first
}
transformed parameters {
  // about the posterior sd of centre_k given the component's weight and scale: its prior and the
  // total_weight * pi_k records it describes
  vector[K] centre_scale = inv_sqrt(inv_square(prior_centre_sd) + total_weight * mixing ./ square(sigma));
  vector[K] centre = prior_centre_mean + centre_z .* centre_scale;   // component k's mean log income over the records
}
model {
  vector[K] log_pi = log(mixing);
  vector[n] log_mix;
  mixing ~ dirichlet(rep_vector(dirichlet_concentration, K));
  centre ~ normal(prior_centre_mean, prior_centre_sd);
  target += sum(log(centre_scale));   // the Jacobian of centre_z -> centre: the prior stays the one on centre
  to_vector(theta) ~ normal(0, theta_sd);
  sigma ~ inv_gamma(5, 4 * prior_sigma_mean);
  if (shared_slopes) {
    // log pi_k + log Normal(y_i | centre_k + Q_i theta, sigma_k) is a quadratic in the record's
    // residual r_i = y_i - prior_centre_mean - Q_i theta:  lp_ik = a_k + b_k r_i + c_k r_i^2, with
    // d_k = centre_k - prior_centre_mean, a_k = log pi_k - log sigma_k + log_norm - d_k^2 / (2 sigma_k^2),
    // b_k = d_k / sigma_k^2, c_k = -1 / (2 sigma_k^2). So the n x K matrix lp is one matrix product
    // [1, r, r^2] * coefficients: the same density with a third of the autodiff nodes of writing
    // it out per component (measured: 7.2 s against 11.0 s per paper-size fit on CmdStan).
    // Shifting by prior_centre_mean keeps d_k small, so the expansion loses no precision.
    vector[n] r = J > 0 ? y_shifted - Q * theta[:, 1] : y_shifted;
    vector[K] d = centre_z .* centre_scale;
    vector[K] precision = inv_square(sigma);
    matrix[3, K] coefficients = [(log_pi - log(sigma) + log_norm - 0.5 * square(d) .* precision)',
                                 (d .* precision)',
                                 (-0.5 * precision)'];
    matrix[n, K] lp = append_col(append_col(ones, r), square(r)) * coefficients;
    log_mix = lp[:, 1];
    for (k in 2:K) log_mix = log_sum_exp(log_mix, lp[:, k]);   // elementwise: stays vectorised over records
  } else {
    matrix[n, K] mu = rep_matrix(centre', n);
    if (J > 0) mu += Q * theta;
    log_mix = log_pi[1] - log(sigma[1]) + log_norm - 0.5 * square((y - mu[:, 1]) / sigma[1]);
    for (k in 2:K) {
      log_mix = log_sum_exp(log_mix, log_pi[k] - log(sigma[k]) + log_norm - 0.5 * square((y - mu[:, k]) / sigma[k]));
    }
  }
  if (censor) {
    vector[n] u = weights .* log_mix - censor_shift;
    target += sum(fmin(fmax(u, -censor_bound), censor_bound));
  } else {
    target += dot_product(weights, log_mix);
  }
}
generated quantities {
  matrix[P, K] beta;          // column k holds component k's coefficients on the columns of X
  vector[emit_log_lik ? n : 0] log_lik;
  if (J > 0) {
    beta[2:P] = shared_slopes ? rep_matrix(R_inverse * theta[:, 1], K) : R_inverse * theta;
    beta[1] = centre' - column_means * beta[2:P];
  } else {
    beta[1] = centre';
  }
  if (emit_log_lik) {
    matrix[n, K] mu = X * beta;
    for (i in 1:n) {
      vector[K] lp = log(mixing);
      for (k in 1:K) lp[k] += normal_lpdf(y[i] | mu[i, k], sigma[k]);
      log_lik[i] = log_sum_exp(lp);
    }
  }
}
