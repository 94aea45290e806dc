// Weighted (pseudo posterior) binned model of a continuous column (log wage, log income).
//
//   The column's range is cut into J public bins of equal width (ppmlib.models.bins); a record of
//   cell u (a distinct row x_u of the design X) falls in bin j with probability
//   p_uj = softmax(x_u * beta)_j, and is uniform within its bin, so its density is
//   p_uj / width and its log-likelihood log p_uj - log(width).
//   beta is P x J: row 1 (the intercept) is the reference cell's shape over the bins, row p > 1
//   the shift of the logits that column p of X adds. Every row is a first-order random walk over
//   the bins (neighbouring bins have close logits), centred to sum zero (softmax ignores a
//   constant, so the centring identifies the rows):
//     beta[1] = centre(cumulative_sum([0, sigma_shape * z_shape]))
//     beta[p] = centre(cumulative_sum([0, tau * z[p]])), p > 1
//     z_shape, z ~ Normal(0, 1)  (non-centred)
//     sigma_shape ~ Normal+(0, prior_shape_sd)          ppmlib default sd 2
//     tau ~ Normal+(0, prior_effect_sd)                 ppmlib default sd 1
//   The shared tau shrinks every column's shift toward zero (the cells toward each other) and
//   smooths it across the bins.
//
// Data: weights are data. Uncensored (censor = 0) the weighted log-likelihood is exactly
// sum_uj W_uj log p_uj - sum_i alpha_i log(width), W_uj the total weight of the records of cell u
// in bin j, so the fit's cost grows with cells x bins, not with records.
// Censored (censor = 1, the strict mechanism): records with equal (cell, bin, weight, shift) go as
// groups; group g adds size_g * clip(weight_g * log_lik_g - shift_g, -censor_bound, censor_bound),
// clip(x, -b, b) written fmin(fmax(x, -b), b).
// The generated quantity edges repeats the public bins' J + 1 edges in every draw.
// emit_log_lik = 1 writes each record's unweighted log-likelihood (its cell and bin are sent).
functions {
  vector centred_walk(vector steps) {
    int J = rows(steps) + 1;
    vector[J] level = append_row(rep_vector(0, 1), cumulative_sum(steps));
    return level - mean(level);
  }
}
data {
  int<lower=1> n;
  int<lower=1> P;
  int<lower=2> J;
  int<lower=1> U;
  matrix[U, P] cell_X;
  real bin_low;
  real<lower=0> bin_width;
  matrix<lower=0>[U, J] cell_bin_w;
  real<lower=0> prior_shape_sd;
  real<lower=0> prior_effect_sd;
  int<lower=0, upper=1> censor;
  real<lower=0> censor_bound;
  int<lower=0> n_groups;
  array[n_groups] int<lower=1, upper=U> group_cell;
  array[n_groups] int<lower=1, upper=J> group_bin;
  vector<lower=0>[n_groups] group_sizes;
  vector<lower=0, upper=1>[n_groups] group_weights;
  vector[n_groups] group_shifts;
  int<lower=0, upper=1> emit_log_lik;
  int<lower=0> n_records;
  array[n_records] int<lower=1, upper=U> record_cell;
  array[n_records] int<lower=1, upper=J> record_bin;
}
transformed data {
  real log_width = log(bin_width);
}
parameters {
  vector[J - 1] z_shape;
  matrix[P - 1, J - 1] z;
  real<lower=0> sigma_shape;
  real<lower=0> tau;
}
transformed parameters {
  matrix[P, J] beta;
  beta[1] = centred_walk(sigma_shape * z_shape)';
  for (p in 2:P) {
    beta[p] = centred_walk(tau * z[p - 1]')';
  }
}
model {
  matrix[U, J] log_p;
  matrix[U, J] logits = cell_X * beta;
  for (u in 1:U) {
    log_p[u] = (logits[u]' - log_sum_exp(logits[u]))';
  }
  z_shape ~ std_normal();
  to_vector(z) ~ std_normal();
  sigma_shape ~ normal(0, prior_shape_sd);
  tau ~ normal(0, prior_effect_sd);
  if (censor) {
    for (g in 1:n_groups) {
      real term = group_weights[g] * (log_p[group_cell[g], group_bin[g]] - log_width) - group_shifts[g];
      target += group_sizes[g] * fmin(fmax(term, -censor_bound), censor_bound);
    }
  } else {
    target += sum(cell_bin_w .* log_p);
  }
}
generated quantities {
  // the public bins, so that the draws carry them (ppmlib's log_lik and predict read them)
  vector[J + 1] edges = bin_low + bin_width * linspaced_vector(J + 1, 0, J);
  vector[n_records] log_lik;
  for (i in 1:n_records) {
    row_vector[J] logits = cell_X[record_cell[i]] * beta;
    log_lik[i] = logits[record_bin[i]] - log_sum_exp(logits) - log_width;
  }
}
