# Oracle values for ppmlib.evaluate.survey: weighted cell means and totals with their
# Taylor-linearised standard errors, from R's survey package (Lumley).
#
# Run from the repository root (needs Debian's r-cran-survey; no test needs R):
#     Rscript tests/oracles/survey_oracle.R
# Reads tests/oracles/survey_data.csv (written once by this script if absent, with a fixed seed)
# and writes tests/oracles/survey_oracle.csv: one row per design, cell and statistic.
#
# Designs: "strata_psu" (ids = ~psu, strata = ~stratum), "psu" (ids = ~psu, no strata),
# "records" (ids = ~1: each record its own PSU). All with weights = ~w and no fpc: PSUs
# sampled with replacement, survey's default variance.
suppressPackageStartupMessages(library(survey))
options(survey.lonely.psu = "fail")

data_path <- "tests/oracles/survey_data.csv"
if (!file.exists(data_path)) {
  set.seed(20210115)
  n <- 240
  stratum <- rep(1:3, times = c(90, 80, 70))
  # 4, 3 and 5 PSUs per stratum, numbered uniquely across strata
  psu <- integer(n)
  psu[stratum == 1] <- sample(rep(1:4, length.out = 90))
  psu[stratum == 2] <- sample(rep(5:7, length.out = 80))
  psu[stratum == 3] <- sample(rep(8:12, length.out = 70))
  cell <- sample(c("a", "b", "c"), n, replace = TRUE, prob = c(0.5, 0.3, 0.2))
  w <- round(exp(rnorm(n, log(500) + 0.3 * stratum, 0.6)), 2)
  y <- rpois(n, 10 + 2 * (cell == "b") - 3 * (cell == "c") + stratum)
  write.csv(data.frame(stratum, psu, cell, w, y), data_path, row.names = FALSE)
}
d <- read.csv(data_path)

designs <- list(
  strata_psu = svydesign(ids = ~psu, strata = ~stratum, weights = ~w, data = d),
  psu = svydesign(ids = ~psu, weights = ~w, data = d),
  records = svydesign(ids = ~1, weights = ~w, data = d)
)
rows <- list()
for (name in names(designs)) {
  des <- update(designs[[name]], one = rep(1, nrow(d)))
  m <- svyby(~y, ~cell, des, svymean)
  t <- svyby(~y, ~cell, des, svytotal)
  wt <- svyby(~one, ~cell, des, svytotal)
  rows[[length(rows) + 1]] <- data.frame(design = name, cell = m$cell, statistic = "mean",
                                         estimate = coef(m), se = SE(m))
  rows[[length(rows) + 1]] <- data.frame(design = name, cell = t$cell, statistic = "total",
                                         estimate = coef(t), se = SE(t))
  rows[[length(rows) + 1]] <- data.frame(design = name, cell = wt$cell, statistic = "weight_total",
                                         estimate = coef(wt), se = SE(wt))
}
out <- do.call(rbind, rows)
out$estimate <- sprintf("%.17g", out$estimate)
out$se <- sprintf("%.17g", out$se)
write.csv(out, "tests/oracles/survey_oracle.csv", row.names = FALSE, quote = FALSE)
cat("wrote tests/oracles/survey_oracle.csv with survey", as.character(packageVersion("survey")), "\n")
