"""The lines the host-side Python tests print, as every test layer of
`make test` does: "PASS <prefix>-<test>" or "FAIL <prefix>-<test>: why"
per test, then "N passed, M failed"."""
import os
import sys
import unittest


def main(module, prefix):
    """Runs the tests of @module; the exit status: 1 on any failure."""
    class Lines(unittest.TextTestResult):
        def addSuccess(self, test):
            super().addSuccess(test)
            print("PASS %s-%s" % (prefix, test._testMethodName))

        def addFailure(self, test, err):
            super().addFailure(test, err)
            print("FAIL %s-%s: %s" % (prefix, test._testMethodName, err[1]))

        def addError(self, test, err):
            super().addError(test, err)
            print("FAIL %s-%s: error %s" % (prefix, test._testMethodName, err[1]))

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            print("PASS %s-%s # SKIP %s" % (prefix, test._testMethodName, reason))

    suite = unittest.defaultTestLoader.loadTestsFromModule(module)
    with open(os.devnull, "w") as null:
        res = unittest.TextTestRunner(stream=null, resultclass=Lines).run(suite)
    failed = len(res.failures) + len(res.errors)
    print("%d passed, %d failed" % (res.testsRun - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit("passfail.py is imported by the tests, not run")
