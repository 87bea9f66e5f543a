#include <cstdio>
int main() { std::puts("slicewright"); return 0; }
