// Function called without new is the same constructor.
Function('return this')().x = 1
