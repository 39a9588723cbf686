"""The course's workflows: each runs one whole job (build the sites, release, grade, check, publish, the demo
cycle) from the layers below."""
