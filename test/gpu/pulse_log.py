"""What gpu-pulse printed: its phases, for the GPU scripts' checkers (attribution, Container
Insights, energy per pod), which compare what the exporter read with when each load ran."""
import re


def phases(path):
    """[(state, start, end)] from a gpu-pulse stdout file: state 'on' or 'off', unix seconds."""
    out = []
    for line in open(path):
        m = re.search(r"phase=(on|off).*start=([\d.]+).*end=([\d.]+)", line)
        if m:
            out.append((m.group(1), float(m.group(2)), float(m.group(3))))
    return out
