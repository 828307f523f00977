"""Every registered primitive has both modes, or says why not.

A primitive with VJP templates must have JVP templates for the same
parameters (None in the same places); a non-differentiable one has neither.
"""
import s2s.rules  # noqa: F401  (registers every rule module)
from s2s.rules.registry import all_rules


def _name(rule):
    return f"{getattr(rule.fn, '__module__', '')}.{getattr(rule.fn, '__name__', rule.fn)}"


def test_every_primitive_has_both_modes_or_none():
    problems = []
    for rule in all_rules():
        if rule.nondiff:
            if rule.vjps or rule.jvps:
                problems.append(f"{_name(rule)}: marked non-differentiable but has templates")
            continue
        if not rule.jvps:
            problems.append(f"{_name(rule)}: VJP but no JVP")
        elif [t is None for t in rule.vjps] != [t is None for t in rule.jvps]:
            problems.append(f"{_name(rule)}: VJP and JVP cover different parameters")
    assert not problems, "\n".join(problems)


def test_the_check_can_fail():
    from s2s.rules.registry import Rule

    broken = Rule(fn=abs, vjps=(lambda g, ans, x: g,), jvps=())
    assert not broken.nondiff and not broken.jvps
