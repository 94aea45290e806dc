# Identification-risk oracle: the authors' R package on fixed inputs.
#
# Runs IdentificationRiskCalculation (Hornby and Hu 2021; github.com/RyanHornby/IdentificationRiskCalculation)
# on the committed inputs in tests/oracles/identification_risk/ (written by identification_risk_inputs.py)
# and writes, for each scenario, the package's per-record matrices (c, T, K, F, Risk; one column per
# synthetic dataset) and its per-dataset vectors (s, EMR, TMR, FMR). The package's code is not part of
# this repository: the script installs it from a source checkout into a temporary library (it compiles
# C++, so it needs R's build tools and Rcpp: Debian's r-base-dev and r-cran-rcpp).
#
#   Rscript tests/oracles/identification_risk.R PATH/TO/IdentificationRiskCalculation
#
# tests/test_identification_oracle.py compares ppmlib with the files written here; it needs no R.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) stop("usage: Rscript identification_risk.R PATH/TO/IdentificationRiskCalculation")
source_dir <- normalizePath(args[1])
script_dir <- dirname(normalizePath(sub("--file=", "", grep("--file=", commandArgs(FALSE), value = TRUE))))
io_dir <- file.path(script_dir, "identification_risk")

lib <- tempfile("rlib")
dir.create(lib)
status <- system2(file.path(R.home("bin"), "R"), c("CMD", "INSTALL", "--no-test-load", paste0("--library=", lib), shQuote(source_dir)))
if (status != 0) stop("R CMD INSTALL of the package failed")
library(IdentificationRiskCalculation, lib.loc = lib)

read_inputs <- function(factors) {
  read <- function(name) {
    frame <- read.csv(file.path(io_dir, name))
    for (col in factors) frame[[col]] <- as.factor(frame[[col]])
    frame
  }
  synthetic_files <- sort(list.files(io_dir, pattern = "^synthetic_[0-9]+[.]csv$"))
  list(orig = read("confidential.csv"), syn = lapply(synthetic_files, read))
}

write_result <- function(result, scenario) {
  m <- length(result$exp.risk_vector)
  records <- do.call(cbind, lapply(c("c", "T", "K", "F", "Risk"), function(part) {
    block <- as.data.frame(result[[paste0(part, "_vector")]])
    names(block) <- paste0(part, "_", seq_len(m))
    block
  }))
  rates <- data.frame(dataset = seq_len(m), s = result$s_vector, EMR = result$exp.risk_vector,
                      TMR = result$true.rate_vector, FMR = result$false.rate_vector)
  write.csv(records, file.path(io_dir, paste0(scenario, "_records.csv")), row.names = FALSE)
  # 17 significant digits: the doubles round-trip exactly
  write.csv(format(rates, digits = 17), file.path(io_dir, paste0(scenario, "_rates.csv")), row.names = FALSE, quote = FALSE)
  cat(scenario, ": EMR", format(result$exp.risk_vector, digits = 6), " TMR", format(result$true.rate_vector, digits = 6),
      " FMR", format(result$false.rate_vector, digits = 6), "\n")
}

# UrbanRural and Expenditure are un-synthesized (equal in every file); Race, Income and IncomeGroup are synthesized.
# 1. continuous, relative radius (the package's default): UrbanRural known, Income synthesized
d <- read_inputs(c("UrbanRural", "Race"))
write_result(IdentificationRisk(d$orig, d$syn, known = "UrbanRural", syn = "Income", r = 0.1), "continuous_relative")
# 2. continuous, absolute radius of $2,000
write_result(IdentificationRisk(d$orig, d$syn, known = "UrbanRural", syn = "Income", r = 2000, percentage = FALSE),
             "continuous_absolute")
# 3. mixed: Race (categorical) and Income (continuous) synthesized (the README's scenario 2)
write_result(IdentificationRisk(d$orig, d$syn, known = "UrbanRural", syn = c("Race", "Income"), r = 0.1),
             "mixed_relative")
# 4. a known continuous variable: Expenditure within 5%, Income within 10% (radii in column order)
write_result(IdentificationRisk(d$orig, d$syn, known = c("UrbanRural", "Expenditure"), syn = "Income",
                                r = c(0.1, 0.05)), "known_continuous")
# 5. categorical: Race and IncomeGroup synthesized, exact matching
d <- read_inputs(c("UrbanRural", "Race", "IncomeGroup"))
write_result(IdentificationRiskCategorical(d$orig, d$syn, known = "UrbanRural", syn = c("Race", "IncomeGroup")),
             "categorical")
writeLines(c(paste("package commit:", Sys.getenv("IRC_COMMIT", "unknown")), R.version.string,
             paste("Rcpp", packageVersion("Rcpp"))), file.path(io_dir, "provenance.txt"))
