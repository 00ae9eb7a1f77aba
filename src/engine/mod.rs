//! The optimized assembly engine (see issue: engine proven equal to the model).
