"""Step 5: how far the measures can be trusted (judge and grader agreement with humans, labelling)."""
