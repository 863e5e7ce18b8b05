// [].constructor is Array, Array.constructor is Function.
[].constructor.constructor('return this')()
