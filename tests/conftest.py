from ppmlib import stan


def pytest_report_header(config):
    try:
        return f"ppmlib Stan backend: {stan.backend()} (CmdStan found: {stan.cmdstan_available()})"
    except Exception as err:  # noqa: BLE001 - the header must never break collection
        return f"ppmlib Stan backend: unavailable ({err})"
