"""Every exercise of the course, by key. The references live in these modules and nowhere in the
notebooks."""
from . import compiler, dsl, llm, objects, passes, performance, pipeline, search

EXERCISES = {e.key: e for module in (dsl, objects, compiler, pipeline, performance, llm, passes,
                                                                 search)
             for e in module.EXERCISES}
