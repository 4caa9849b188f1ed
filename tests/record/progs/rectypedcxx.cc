// rectypedcxx.cc - a C++ target for typed probes: a method of a class
// in a namespace (this, a reference parameter), built with -g -O0.
//
//   rectypedcxx OUT N   N calls of shop::Cart::add; each writes
//                       "add ID PRICE QTY COUNT TOTAL NAME" to OUT
#include <cstdio>
#include <cstdlib>

static FILE *out;

namespace shop {

struct Item {
	int id;
	double price;
	const char *name;
};

class Cart {
public:
	int count = 0;
	double total = 0;
	double add(const Item &it, int qty);
};

__attribute__((noinline)) double Cart::add(const Item &it, int qty)
{
	count += qty;
	total += it.price * qty;
	std::fprintf(out, "add %d %.17g %d %d %.17g %s\n", it.id, it.price, qty,
		     count, total, it.name);
	return total;
}

} // namespace shop

int main(int argc, char **argv)
{
	if (argc != 3)
		return 2;
	out = std::fopen(argv[1], "w");
	if (!out)
		return 1;
	shop::Cart cart;
	static const char *names[] = { "pen", "ink", "pad" };
	for (int i = 0; i < std::atoi(argv[2]); i++) {
		shop::Item it = { 10 + i, 0.75 * (i + 1), names[i % 3] };
		cart.add(it, i + 1);
	}
	std::fclose(out);
	return 0;
}
