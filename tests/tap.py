"""What the Python tests under tests/ share: "ok - ..." / "not ok - ..." lines, with a detail
under a failure, and the exit status they add up to."""
import sys


class Tap:
    def __init__(self, prefix):
        self.prefix, self.failed = prefix, 0

    def check(self, ok, name, detail=None):
        print(("ok - " if ok else "not ok - ") + self.prefix + name)
        if not ok:
            self.failed += 1
            if detail:
                print("#   " + str(detail).replace("\n", "\n#   ")[:2000])

    def exit(self):
        sys.exit(1 if self.failed else 0)
