"""ppmlib.book.provenance: the software versions the book names."""


def test_versions_name_the_stan_version_the_backend_runs():
    from ppmlib.inference import backends
    from ppmlib.book import provenance
    found = provenance.versions()
    assert found["numpy"] == __import__("numpy").__version__
    if backends.backend() == "pystan":
        assert found["Stan backend"].startswith("PyStan 3.10") and "Stan 2.35.0" in found["Stan backend"]
    else:
        assert "CmdStan 2." in found["Stan backend"]
