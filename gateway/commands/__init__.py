"""The command line: `gateway` and its subcommands (serve, setup, doctor, demo, access, audit, lock, token,
selftest, watch...), each in its module.
"""
