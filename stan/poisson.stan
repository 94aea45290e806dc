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
//
// Censoring (censor = 1, the strict mechanism of Hu, Williams and Savitsky 2022): record i then
// contributes u_i = clip(alpha_i * log p(y_i | lambda) - shift_i, -censor_bound, censor_bound)
// instead of alpha_i * log p(y_i | lambda), where shift_i = alpha_i * r_i is its weighted centre
// (ppmlib computes r_i from the record's own value and public constants) and censor_bound = epsilon / 2.
// The sums above cannot express a clipped term, so the records come as groups of equal
// (value, weight, shift): group_sizes[k] records of value group_values[k]. With censor = 0 the
// groups are empty and the program is the one above, draw for draw.
// clip(x, -b, b) is fmin(fmax(x, -b), b), vectorised: its gradient is x's inside the window and
// 0 outside, as the clipped density's is (about a third cheaper per gradient than (|x + b| - |x - b|) / 2).
data {
  int<lower=1> n;
  real<lower=0> sum_w;
  real<lower=0> sum_wy;
  real sum_w_lgamma;
  real<lower=0> prior_shape;
  real<lower=0> prior_rate;
  int<lower=0, upper=1> emit_log_lik;
  array[emit_log_lik ? n : 0] int<lower=0> y;
  int<lower=0, upper=1> censor;
  real<lower=0> censor_bound;
  int<lower=0> n_groups;
  array[censor ? n_groups : 0] int<lower=0> group_values;
  vector<lower=0>[censor ? n_groups : 0] group_sizes;
  vector<lower=0>[censor ? n_groups : 0] group_weights;
  vector[censor ? n_groups : 0] group_shifts;
}
transformed data {
  vector[censor ? n_groups : 0] group_y = to_vector(group_values);
  vector[censor ? n_groups : 0] group_lgamma = lgamma(group_y + 1);
}
parameters {
  real<lower=0> lambda;
}
model {
  lambda ~ gamma(prior_shape, prior_rate);
  if (censor) {
    vector[n_groups] u = group_weights .* (group_y * log(lambda) - lambda - group_lgamma) - group_shifts;
    target += dot_product(group_sizes, fmin(fmax(u, -censor_bound), censor_bound));
  } else {
    target += sum_wy * log(lambda) - sum_w * lambda - sum_w_lgamma;
  }
}
generated quantities {
  vector[emit_log_lik ? n : 0] log_lik;
  for (i in 1:(emit_log_lik ? n : 0)) {
    log_lik[i] = poisson_lpmf(y[i] | lambda);
  }
}
